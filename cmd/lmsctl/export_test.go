package main

// Main is lmsctl's main, which the tests' binary runs when it is started
// as lmsctl (see TestMain).
var Main = main
