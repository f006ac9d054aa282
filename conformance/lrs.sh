#!/usr/bin/env bash
# Runs ADL's LRS conformance suite (adlnet/lrs-conformance-test-suite)
# against the LRS of a fresh `lms serve`, on SQLite by default or on the
# PostgreSQL server of LMS_DATABASE_URL. The suite comes from GitHub, so
# this needs the network CI does not have; run it by hand:
#
#   conformance/lrs.sh                   # clones the suite into var/lrs-suite
#   conformance/lrs.sh /path/to/checkout # a checkout of it you already have
#
# It builds bin/lms, starts it on a free port with a temp data dir and one
# tenant, gives the suite an admin's token as Basic credentials (the LRS
# takes any user name with a token as the password), and exits with the
# suite's status. The suite's own report is printed as it runs.
set -euo pipefail
cd "$(dirname "$0")/.."

# The commit of the suite the LRS was last checked against.
suite_commit=2ec25f2eb8ccfcb7cb63ec2679dbd965f9f6ffdc
suite=${1:-var/lrs-suite}
if [ ! -d "$suite/.git" ] && [ ! -f "$suite/package.json" ]; then
	git clone -q https://github.com/adlnet/lrs-conformance-test-suite "$suite"
fi
if [ -d "$suite/.git" ]; then
	git -C "$suite" checkout -q "$suite_commit"
fi
(cd "$suite" && npm install --no-audit --no-fund --silent)

go build -o bin/lms ./cmd/lms
work=$(mktemp -d)
pid=""
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

free_port() {
	local p
	for p in $(seq "$1" $(($1 + 100))); do
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
	done
	echo "lrs.sh: no free port from $1" >&2
	exit 1
}
api_port=$(free_port 18080)
export LMS_DATA_DIR="$work/data" LMS_API_ADDR="127.0.0.1:$api_port" LMS_WEB_ADDR="" LMS_CONTENT_ADDR=""
host=127.0.0.1
password=conformance-$RANDOM$RANDOM
bin/lms migrate >/dev/null
bin/lms tenant add --host "$host" --name "LRS conformance" --admin-email "admin@$host" --admin-password "$password" >/dev/null
bin/lms serve >"$work/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
	curl -fsS "http://$host:$api_port/api/health" >/dev/null 2>&1 && break
	sleep 0.2
done
token=$(curl -fsS -H "Content-Type: application/json" \
	-d "{\"email\":\"admin@$host\",\"password\":\"$password\"}" \
	"http://$host:$api_port/api/auth/login" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).data.token))')

cd "$suite"
node bin/console_runner.js -x 1.0.3 -e "http://$host:$api_port/api/xapi" -a -u any -p "$token"
