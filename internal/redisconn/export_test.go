package redisconn

// OpenWithClock is open with the breaker's clock, for tests.
var OpenWithClock = open
