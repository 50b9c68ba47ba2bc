# call 29 (sixteenth session): lb5 = lb4 + one load of the semaphore's waiters per give-back take (ua_take_for_give_back), m8 = main 3ecc191. tests/ualloc.rs x5 of lb5, scale at 8192, grids x3 alternating
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 230 - $(date +%s) + t0 )); }
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
for k in 1 2 3 4 5; do
  s=$(date +%s); timeout 30 .gpu/bin/ualloc-test-lb5 --nocapture --test-threads 1 > $o/ua-lb5-$k.txt 2>&1; echo "ua-lb5-$k: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt
done; save
G="--strategy bump,ualloc --test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,256,1024,4096,8192 --prime --cell-secs 1"
for k in 1 2 3; do for b in m8 lb5; do run g-$b-$k 25 .gpu/bin/gpu-heap-$b bench $G --json $o/g-$b-$k.json; done; done
run conf-lb5-scale 70 .gpu/bin/gpu-heap-lb5 conformance --strategy ualloc --scenario scale --workgroups 8192 --json $o/conf-lb5-scale.json
cat $o/log.txt; for f in $o/ua-*.txt; do echo "== $(basename $f)"; grep -h "panicked\|test result\|left:\|right:" $f | cut -c1-300; done; grep -hE " (pass|FAIL) |  [a-z].*:" $o/conf-*.txt | cut -c1-120
