# next session's first call (prepared in the seventeenth): m10 = main 0aa2c02 (its grids and registers are in nvidia-h200-2026-11-28/call9-10), m11 = main ab84ab3, the end of the seventeenth session (a92f4b2, 507a9ba, c4d3937: a malloc out of leaves finds and retries every listed give-back candidate). Build: git checkout X && cargo build --release -p gpu-heap-cli && cargo test --release --test ualloc --no-run; strip -o .gpu/bin/gpu-heap-NAME target/release/gpu-heap; strip -o .gpu/bin/ualloc-test-NAME target/release/deps/ualloc-<newest, not .d>; xz -9 -f .gpu/bin/*. Registers of both, tests/ualloc.rs of m11 six times, its conformance ten at 1024 and scale at 8192, utilisation, grids alternating
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
for b in m10 m11; do run ks-$b 30 .gpu/bin/gpu-heap-$b kernel-stats --strategy ualloc,tbuddy --json $o/ks-$b.json; done
for k in 1 2 3 4 5 6; do s=$(date +%s); timeout 40 .gpu/bin/ualloc-test-m11 --nocapture --test-threads 1 > $o/ua-m11-$k.txt 2>&1; echo "ua-m11-$k: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; done; save
run conf-m11 170 .gpu/bin/gpu-heap-m11 conformance --strategy ualloc --workgroups 1024 --json $o/conf-m11.json
run conf-m11-scale 80 .gpu/bin/gpu-heap-m11 conformance --strategy ualloc --scenario scale --workgroups 8192 --json $o/conf-m11-scale.json
run util-m11-32MiB 40 .gpu/bin/gpu-heap-m11 utilisation --strategy ualloc --heap-size 32MiB --sizes 16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,65536 --json $o/util-m11-32MiB.json
G="--strategy bump,ualloc --test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,1024,2048,4096,8192 --prime --cell-secs 1"
for k in 1 2 3; do for b in m10 m11; do run g-$b-$k 25 .gpu/bin/gpu-heap-$b bench $G --json $o/g-$b-$k.json; done; done
cat $o/log.txt; grep -h "Register" $o/ks-*.txt; grep -h "test result\|panicked" $o/ua-*.txt; grep -hE " (pass|FAIL) |  [a-z].*:" $o/conf-*.txt | cut -c1-160; grep -h "%" $o/util-*.txt | head -16
