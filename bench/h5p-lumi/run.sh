#!/usr/bin/env bash
# Side-by-side benchmark: the LMS H5P service (/h5p of `lms serve`) against the
# Lumi H5P server (server.js beside this file). Not part of CI.
#
#   bash bench/h5p-lumi/run.sh            (from the repository root or anywhere)
#
# Knobs (environment): COLD_RUNS (fresh instances per server, default 5),
# WARM_UPLOADS (default 20), CONNS (default 32), DURATION (one wrk run,
# default 5s), ROUNDS (alternating ours/Lumi load rounds, default 2),
# WRK_THREADS (default 2), LMS_BIN (use this lms binary instead of building
# bin/lms from the work tree), WARMUP (wrk warm-up before each measured run,
# default 2s), LMS_LOG_LEVEL (ours, default warn), LUMI_LIBRARY_CACHE (1|0),
# OUT_DIR (raw outputs and results.md, default bench/h5p-lumi/out),
# TMPDIR (where both servers keep their data dirs; TMPDIR=/dev/shm puts them on
# tmpfs, where fsync costs nothing: the LMS fsyncs every blob and SQLite
# commit, Lumi's file storages never fsync).
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$BENCH_DIR/../.." && pwd)
FIXTURE=${FIXTURE:-${LMS_FIXTURES_DIR:-$REPO_ROOT/../shared/fixtures}/h5p/valid/h5p-test.h5p}
COLD_RUNS=${COLD_RUNS:-5}
WARM_UPLOADS=${WARM_UPLOADS:-20}
CONNS=${CONNS:-32}
DURATION=${DURATION:-5s}
ROUNDS=${ROUNDS:-2}
WRK_THREADS=${WRK_THREADS:-2}
WARMUP=${WARMUP:-2s}
OUT_DIR=${OUT_DIR:-$BENCH_DIR/out}
ADMIN_PASSWORD=bench-admin-password-1
STATE_JSON='{"answers":[true],"progress":1,"bench":"state"}'

need() { command -v "$1" >/dev/null 2>&1 || { echo "missing tool: $1 ($2)" >&2; exit 1; }; }
need go "Go toolchain"
need node "Node.js 18+"
need npm "npm"
need curl "curl"
need wrk "apt-get update && apt-get install -y wrk"
[ -f "$FIXTURE" ] || { echo "fixture not found: $FIXTURE" >&2; exit 1; }

mkdir -p "$OUT_DIR"; rm -f "$OUT_DIR"/wrk-*.txt
WORK_PARENT=${TMPDIR:-/tmp}
WORK=$(mktemp -d "$WORK_PARENT/bench-h5p-lumi.XXXXXX")
PIDS=()
cleanup() {
    local p
    for p in "${PIDS[@]:-}"; do
        [ -n "$p" ] && kill "$p" 2>/dev/null || true
    done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

free_port() {
    node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# json_get FILE EXPR: evaluates EXPR with the parsed JSON bound to `j`.
json_get() {
    node -e 'const j=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));const v=eval(process.argv[2]);console.log(v===undefined?"":v)' "$1" "$2"
}

# stats: reads numbers (one a line) and prints "median p90 min max n".
stats() {
    node -e '
let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{
  const a=s.split(/\s+/).filter(Boolean).map(Number).sort((x,y)=>x-y);
  if(!a.length){console.log("nan nan nan nan 0");return;}
  const mid=a.length>>1;
  const med=a.length%2?a[mid]:(a[mid-1]+a[mid])/2;
  const p90=a[Math.max(0,Math.ceil(0.9*a.length)-1)];
  const f=x=>x.toFixed(1);
  console.log([f(med),f(p90),f(a[0]),f(a[a.length-1]),a.length].join(" "));
});'
}

wait_http() { # URL HOST LOGFILE
    local i
    for i in $(seq 1 600); do
        if curl -s -o /dev/null -H "Host: $2" "$1"; then return 0; fi
        sleep 0.1
    done
    echo "server did not answer at $1 within 60 s; its log:" >&2
    tail -20 "$3" >&2
    return 1
}

stop_pid() {
    local p=$1 i
    kill "$p" 2>/dev/null || true
    for i in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    local keep=()
    for i in "${PIDS[@]:-}"; do [ "$i" != "$p" ] && [ -n "$i" ] && keep+=("$i"); done
    PIDS=("${keep[@]:-}")
}

rss_mib() { awk '/VmRSS/ {printf "%.0f", $2/1024}' "/proc/$1/status" 2>/dev/null || echo "?"; }

# ---- servers -------------------------------------------------------------

OURS_PID= OURS_URL= TOKEN=
start_ours() { # DATA_DIR
    local port web
    port=$(free_port); web=$(free_port)
    LMS_DATA_DIR="$1" LMS_API_ADDR="127.0.0.1:$port" LMS_WEB_ADDR="127.0.0.1:$web" \
        LMS_TENANT_IDLE=0 LMS_ADMIN_EMAIL=admin@localhost LMS_ADMIN_PASSWORD="$ADMIN_PASSWORD" \
        LMS_LOG_LEVEL="${LMS_LOG_LEVEL:-warn}" \
        "$LMS_BIN" serve >"$1.log" 2>&1 &
    OURS_PID=$!; PIDS+=("$OURS_PID")
    OURS_URL="http://127.0.0.1:$port"
    wait_http "$OURS_URL/h5p/health" localhost "$1.log"
    curl -s -H 'Host: localhost' -H 'Content-Type: application/json' \
        -d "{\"email\":\"admin@localhost\",\"password\":\"$ADMIN_PASSWORD\",\"remember_me\":true}" \
        "$OURS_URL/api/auth/login" >"$WORK/login.json"
    TOKEN=$(json_get "$WORK/login.json" 'j.data.token')
    [ -n "$TOKEN" ] || { echo "login failed: $(cat "$WORK/login.json")" >&2; exit 1; }
}

LUMI_PID= LUMI_URL=
start_lumi() { # DATA_DIR
    local port
    port=$(free_port)
    LUMI_PORT=$port LUMI_DATA_DIR="$1" node "$BENCH_DIR/server.js" >"$1.log" 2>&1 &
    LUMI_PID=$!; PIDS+=("$LUMI_PID")
    LUMI_URL="http://127.0.0.1:$port"
    wait_http "$LUMI_URL/h5p/health" localhost "$1.log"
}

# upload URL OUTFILE: prints the time in ms; fails unless 201.
upload() {
    local out code t
    out=$(curl -s -o "$2" -w '%{http_code} %{time_total}' -H 'Host: localhost' \
        -H "Authorization: Bearer $TOKEN" -F "h5p_file=@$FIXTURE" "$1/h5p/contents/upload")
    code=${out%% *}; t=${out#* }
    if [ "$code" != 201 ]; then
        echo "upload to $1 answered $code: $(head -c 300 "$2")" >&2
        return 1
    fi
    node -e 'console.log((Number(process.argv[1])*1000).toFixed(2))' "$t"
}

# ---- load ----------------------------------------------------------------

cat >"$WORK/state.lua" <<EOF
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.body = "data=" .. "$(node -e 'console.log(encodeURIComponent(process.argv[1]))' "$STATE_JSON")" .. "&preload=1&invalidate=0"
EOF

# load NAME URL LUA ROUND: runs wrk (a warm-up first in round 1); prints
# "req/s non2xx socket-errors p50ms p99ms".
load() {
    local name=$1 url=$2 lua=$3 round=$4 args=()
    [ -n "$lua" ] && args=(-s "$lua")
    if [ "$round" = 1 ]; then
        wrk -t"$WRK_THREADS" -c"$CONNS" -d"$WARMUP" -H 'Host: localhost' \
            -H "Authorization: Bearer $TOKEN" "${args[@]}" "$url" >/dev/null
    fi
    wrk -t"$WRK_THREADS" -c"$CONNS" -d"$DURATION" --latency -H 'Host: localhost' \
        -H "Authorization: Bearer $TOKEN" "${args[@]}" "$url" >"$OUT_DIR/wrk-$name-r$round.txt"
    node -e '
const t=require("fs").readFileSync(process.argv[1],"utf8");
const num=(re)=>{const m=t.match(re);return m?m[1]:"0";};
const ms=(s)=>{const m=s.match(/([\d.]+)(us|ms|s)/);if(!m)return "NaN";const v=Number(m[1]);return (m[2]==="us"?v/1000:m[2]==="s"?v*1000:v).toFixed(2);};
const lat=(p)=>{const m=t.match(new RegExp("^\\s*"+p+"%\\s+(\\S+)","m"));return m?ms(m[1]):"NaN";};
const sockErr=t.match(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/);
const errs=sockErr?sockErr.slice(1).reduce((a,b)=>a+Number(b),0):0;
console.log([Number(num(/Requests\/sec:\s+([\d.]+)/)).toFixed(0), num(/Non-2xx or 3xx responses: (\d+)/), errs, lat("50"), lat("99")].join(" "));
' "$OUT_DIR/wrk-$name-r$round.txt"
}

# combine FILE: one "rps non2xx errs p50 p99" line per round -> mean rps,
# summed non-2xx and errors, mean p50, worst p99, and the per-round rps list.
combine() {
    node -e '
const rows=require("fs").readFileSync(process.argv[1],"utf8").trim().split("\n").map(l=>l.split(" ").map(Number));
const mean=(i)=>rows.reduce((a,r)=>a+r[i],0)/rows.length;
const sum=(i)=>rows.reduce((a,r)=>a+r[i],0);
console.log([mean(0).toFixed(0),sum(1),sum(2),mean(3).toFixed(2),Math.max(...rows.map(r=>r[4])).toFixed(2),rows.map(r=>r[0]).join("/")].join(" "));
' "$1"
}

# ---- run -----------------------------------------------------------------

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
if [ -n "${LMS_BIN:-}" ]; then
    log "using LMS_BIN=$LMS_BIN (not building)"
    LMS_VERSION="given by LMS_BIN"
else
    log "building bin/lms"
    (cd "$REPO_ROOT" && go build -o bin/lms ./cmd/lms)
    LMS_BIN=$REPO_ROOT/bin/lms
    LMS_VERSION=$(cd "$REPO_ROOT" && git rev-parse --short HEAD 2>/dev/null || echo "?")
    [ -z "$(cd "$REPO_ROOT" && git status --porcelain -- cmd internal go.mod 2>/dev/null)" ] || LMS_VERSION="$LMS_VERSION+uncommitted changes"
fi
if [ ! -d "$BENCH_DIR/node_modules/@lumieducation/h5p-express" ]; then
    log "installing Lumi (npm ci)"
    (cd "$BENCH_DIR" && npm ci --no-audit --no-fund --loglevel=error)
fi
LUMI_VERSION=$(node -p 'require(process.argv[1]+"/node_modules/@lumieducation/h5p-server/package.json").version' "$BENCH_DIR")

log "cold uploads: $COLD_RUNS fresh instances each"
: >"$WORK/cold-ours"; : >"$WORK/cold-lumi"
for i in $(seq 1 "$COLD_RUNS"); do
    d="$WORK/ours-cold-$i"; mkdir -p "$d"
    start_ours "$d"
    upload "$OURS_URL" "$WORK/up.json" >>"$WORK/cold-ours"
    stop_pid "$OURS_PID"
    d="$WORK/lumi-cold-$i"; mkdir -p "$d"
    start_lumi "$d"
    upload "$LUMI_URL" "$WORK/up.json" >>"$WORK/cold-lumi"
    stop_pid "$LUMI_PID"
done

log "warm uploads: $WARM_UPLOADS each (one install upload first)"
mkdir -p "$WORK/ours" "$WORK/lumi"
start_ours "$WORK/ours"
start_lumi "$WORK/lumi"
upload "$OURS_URL" "$WORK/ours-first.json" >/dev/null
upload "$LUMI_URL" "$WORK/lumi-first.json" >/dev/null
: >"$WORK/warm-ours"; : >"$WORK/warm-lumi"
for i in $(seq 1 "$WARM_UPLOADS"); do
    upload "$OURS_URL" "$WORK/ours-up.json" >>"$WORK/warm-ours"
    upload "$LUMI_URL" "$WORK/lumi-up.json" >>"$WORK/warm-lumi"
done
OURS_CID=$(json_get "$WORK/ours-up.json" 'j.data.contentId')
LUMI_CID=$(json_get "$WORK/lumi-up.json" 'j.data.contentId')
OURS_INSTALLED_WARM=$(json_get "$WORK/ours-up.json" '(j.data.installedLibraries||[]).length')
LUMI_INSTALLED_WARM=$(json_get "$WORK/lumi-up.json" '(j.data.installedLibraries||[]).filter(l=>l.type!=="none").length')

# Seed a user state so both play models carry a preloaded state.
for side in ours lumi; do
    if [ $side = ours ]; then url=$OURS_URL; cid=$OURS_CID; else url=$LUMI_URL; cid=$LUMI_CID; fi
    code=$(curl -s -o "$WORK/seed-$side.json" -w '%{http_code}' -H 'Host: localhost' \
        -H "Authorization: Bearer $TOKEN" --data-urlencode "data=$STATE_JSON" -d preload=1 -d invalidate=0 \
        "$url/h5p/contentUserData/$cid/state/0")
    [ "$code" = 200 ] || { echo "$side state save answered $code: $(cat "$WORK/seed-$side.json")" >&2; exit 1; }
    code=$(curl -s -o "$WORK/play-$side.json" -w '%{http_code}' -H 'Host: localhost' \
        -H "Authorization: Bearer $TOKEN" "$url/h5p/contents/$cid/play")
    [ "$code" = 200 ] || { echo "$side play answered $code: $(head -c 300 "$WORK/play-$side.json")" >&2; exit 1; }
    grep -q 'bench' "$WORK/play-$side.json" || log "warning: $side play model does not carry the saved state"
done
OURS_PLAY_BYTES=$(wc -c <"$WORK/play-ours.json"); LUMI_PLAY_BYTES=$(wc -c <"$WORK/play-lumi.json")

# The load runs alternate ours/Lumi over ROUNDS rounds (order flipped every
# round), so that noise from other processes on the machine hits both alike.
log "load: $ROUNDS rounds x wrk -t$WRK_THREADS -c$CONNS -d$DURATION per operation and server (${WARMUP} warm-up first)"
: >"$WORK/l-play-ours"; : >"$WORK/l-play-lumi"; : >"$WORK/l-state-ours"; : >"$WORK/l-state-lumi"
for r in $(seq 1 "$ROUNDS"); do
    if [ $((r % 2)) = 1 ]; then order="ours lumi"; else order="lumi ours"; fi
    for side in $order; do
        if [ $side = ours ]; then url=$OURS_URL; cid=$OURS_CID; else url=$LUMI_URL; cid=$LUMI_CID; fi
        load "play-$side" "$url/h5p/contents/$cid/play" "" "$r" >>"$WORK/l-play-$side"
    done
    for side in $order; do
        if [ $side = ours ]; then url=$OURS_URL; cid=$OURS_CID; else url=$LUMI_URL; cid=$LUMI_CID; fi
        load "state-$side" "$url/h5p/contentUserData/$cid/state/0" "$WORK/state.lua" "$r" >>"$WORK/l-state-$side"
    done
done
read -r OP_RPS OP_NON2XX OP_ERR OP_P50 OP_P99 OP_ROUNDS < <(combine "$WORK/l-play-ours")
read -r LP_RPS LP_NON2XX LP_ERR LP_P50 LP_P99 LP_ROUNDS < <(combine "$WORK/l-play-lumi")
read -r OS_RPS OS_NON2XX OS_ERR OS_P50 OS_P99 OS_ROUNDS < <(combine "$WORK/l-state-ours")
read -r LS_RPS LS_NON2XX LS_ERR LS_P50 LS_P99 LS_ROUNDS < <(combine "$WORK/l-state-lumi")
OURS_RSS=$(rss_mib "$OURS_PID"); LUMI_RSS=$(rss_mib "$LUMI_PID")

# Check that the last saves were stored.
for side in ours lumi; do
    if [ $side = ours ]; then url=$OURS_URL; cid=$OURS_CID; else url=$LUMI_URL; cid=$LUMI_CID; fi
    curl -s -H 'Host: localhost' -H "Authorization: Bearer $TOKEN" \
        "$url/h5p/contentUserData/$cid/state/0" >"$WORK/state-after-$side.json"
    grep -q 'bench' "$WORK/state-after-$side.json" || log "warning: $side state not readable after the load run: $(head -c 200 "$WORK/state-after-$side.json")"
done

read -r OC_MED OC_P90 OC_MIN OC_MAX OC_N < <(stats <"$WORK/cold-ours")
read -r LC_MED LC_P90 LC_MIN LC_MAX LC_N < <(stats <"$WORK/cold-lumi")
read -r OW_MED OW_P90 OW_MIN OW_MAX OW_N < <(stats <"$WORK/warm-ours")
read -r LW_MED LW_P90 LW_MIN LW_MAX LW_N < <(stats <"$WORK/warm-lumi")

# ratio A B: A/B with 1 decimal; verdict RATIO GOAL.
ratio() { node -e 'const a=Number(process.argv[1]),b=Number(process.argv[2]);console.log(b>0&&isFinite(a)?(a/b).toFixed(1)+"x":"n/a")' "$1" "$2"; }
verdict() { node -e 'const r=parseFloat(process.argv[1]);console.log(isFinite(r)&&r>=Number(process.argv[2])?"met":"NOT met")' "$1" "$2"; }

R_CM=$(ratio "$LC_MED" "$OC_MED"); R_CP=$(ratio "$LC_P90" "$OC_P90")
R_WM=$(ratio "$LW_MED" "$OW_MED"); R_WP=$(ratio "$LW_P90" "$OW_P90")
R_P=$(ratio "$OP_RPS" "$LP_RPS"); R_S=$(ratio "$OS_RPS" "$LS_RPS")

{
echo "# H5P: LMS vs Lumi ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
echo
echo "Machine: $(nproc) cores; $(node --version); $(go version | awk '{print $3}'); LMS binary $LMS_BIN (tree $LMS_VERSION); Lumi h5p-server $LUMI_VERSION (library cache ${LUMI_LIBRARY_CACHE:-1});"
echo "load average before/after (other processes share the 2 cores): $LOAD_BEFORE / $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?");"
echo "data dirs on $(df -T "$WORK" | awk 'NR==2{print $2}') ($WORK_PARENT);"
echo "fixture $(basename "$FIXTURE") ($(wc -c <"$FIXTURE") bytes); load: $ROUNDS alternating rounds of wrk -t$WRK_THREADS -c$CONNS -d$DURATION (req/s = mean of rounds) after a $WARMUP warm-up."
echo
echo "| operation | ours | Lumi | ratio (ours better by) | goal |"
echo "|---|---|---|---|---|"
echo "| upload cold, median ms (n=$OC_N/$LC_N) | $OC_MED | $LC_MED | $R_CM | ≥3x $(verdict "$R_CM" 3) |"
echo "| upload cold, p90 ms | $OC_P90 | $LC_P90 | $R_CP | ≥3x $(verdict "$R_CP" 3) |"
echo "| upload warm, median ms (n=$OW_N/$LW_N) | $OW_MED | $LW_MED | $R_WM | ≥3x $(verdict "$R_WM" 3) |"
echo "| upload warm, p90 ms | $OW_P90 | $LW_P90 | $R_WP | ≥3x $(verdict "$R_WP" 3) |"
echo "| play model GET, req/s (rounds $OP_ROUNDS vs $LP_ROUNDS) | $OP_RPS | $LP_RPS | $R_P | ≥5x $(verdict "$R_P" 5) |"
echo "| play model latency mean p50 / worst p99 ms | $OP_P50 / $OP_P99 | $LP_P50 / $LP_P99 | | |"
echo "| state save POST, req/s (rounds $OS_ROUNDS vs $LS_ROUNDS) | $OS_RPS | $LS_RPS | $R_S | ≥5x $(verdict "$R_S" 5) |"
echo "| state save latency mean p50 / worst p99 ms | $OS_P50 / $OS_P99 | $LS_P50 / $LS_P99 | | |"
echo "| non-2xx / socket errors (play, save) | $OP_NON2XX+$OP_ERR, $OS_NON2XX+$OS_ERR | $LP_NON2XX+$LP_ERR, $LS_NON2XX+$LS_ERR | | |"
echo "| play model size, bytes | $OURS_PLAY_BYTES | $LUMI_PLAY_BYTES | | |"
echo "| RSS after the load runs, MiB | $OURS_RSS | $LUMI_RSS | | |"
echo
echo "Upload ranges (min-max ms): cold ours $OC_MIN-$OC_MAX, Lumi $LC_MIN-$LC_MAX; warm ours $OW_MIN-$OW_MAX, Lumi $LW_MIN-$LW_MAX."
echo "Libraries installed by the last warm upload: ours $OURS_INSTALLED_WARM, Lumi $LUMI_INSTALLED_WARM."
} | tee "$OUT_DIR/results.md"
log "raw wrk outputs and results.md in $OUT_DIR"
