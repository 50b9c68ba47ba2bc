# call 6 (fifteenth session): tests/ualloc.rs (four tests, the crowd included) and tests/tbuddy.rs on the H100: tm = main 5f44333, tf = fx (the phantom-batch limit and UAlloc's starving passes), alternating
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
for k in 1 2 3 4; do for b in tm tf; do
  s=$(date +%s); timeout 40 .gpu/bin/ualloc-test-$b --nocapture --test-threads 1 > $o/ua-$b-$k.txt 2>&1; echo "ua-$b-$k: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt
done; done; save
for b in tm tf; do s=$(date +%s); timeout 60 .gpu/bin/tbuddy-test-$b --test-threads 1 > $o/tb-$b.txt 2>&1; echo "tb-$b: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; done; save
cat $o/log.txt; for f in $o/ua-*.txt $o/tb-*.txt; do echo "== $(basename $f)"; grep -h "panicked\|test result\|mallocs:\|of the 2 KiB\|left:\|right:\|^test .*FAILED" $f | cut -c1-300; done
