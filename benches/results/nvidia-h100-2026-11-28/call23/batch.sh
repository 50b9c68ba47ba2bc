# call 7 (fifteenth session): fy = fx with the calls asking the tree buddy for a bin waited for inside the rounds (UA_BIN_PRODUCERS) and those holding a bin's leaves between passes ending a pass (UA_BIN_HOLDERS): tests/ualloc.rs three times, ualloc's ten at 1024 workgroups, churn
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 570 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
cold() { # name cmd... : a fresh HOME and no driver disk cache
  local n=$1; shift; local h=$(mktemp -d)
  local s=$(date +%s%N)
  HOME=$h XDG_CACHE_HOME=$h __GL_SHADER_DISK_CACHE=0 timeout 120 "$@" > $o/$n.txt 2>&1
  echo "$n: rc $? $(( ($(date +%s%N) - s) / 1000000 )) ms" >> $o/log.txt; save; }
for k in 1 2 3; do
  s=$(date +%s); timeout 40 .gpu/bin/ualloc-test-ty --nocapture --test-threads 1 > $o/ua-ty-$k.txt 2>&1; echo "ua-ty-$k: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt
done; save
run conf-fy-ualloc 150 .gpu/bin/gpu-heap-fy conformance --strategy ualloc --workgroups 1024 --json $o/conf-fy-ualloc.json
cat $o/log.txt; for f in $o/ua-*.txt; do echo "== $(basename $f)"; grep -h "panicked\|test result\|mallocs:\|of the 2 KiB\|left:\|right:" $f | cut -c1-260; done; grep -hE " (pass|FAIL) |  [a-z].*:" $o/conf-*.txt | cut -c1-120
