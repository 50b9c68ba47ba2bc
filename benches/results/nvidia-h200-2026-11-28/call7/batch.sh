# next session's first call (prepared in the sixteenth): m9 = main c0becaa (or later), lk = branch looks. Build each: git checkout X && cargo build --release -p gpu-heap-cli && cargo test --release --test ualloc --no-run; strip -o .gpu/bin/gpu-heap-NAME target/release/gpu-heap; strip -o .gpu/bin/ualloc-test-NAME target/release/deps/ualloc-<newest, not .d>; xz -9 -f .gpu/bin/*. tests/ualloc.rs alternating, conformance, utilisation and churn of lk, grids alternating
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
for k in 1 2 3 4 5 6; do for b in m9 lk; do
  s=$(date +%s); timeout 40 .gpu/bin/ualloc-test-$b --nocapture --test-threads 1 > $o/ua-$b-$k.txt 2>&1; echo "ua-$b-$k: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt
done; done; save
run conf-lk-ualloc 170 .gpu/bin/gpu-heap-lk conformance --strategy ualloc --workgroups 1024 --json $o/conf-lk-ualloc.json
run conf-lk-scale 80 .gpu/bin/gpu-heap-lk conformance --strategy ualloc --scenario scale --workgroups 8192 --json $o/conf-lk-scale.json
run util-lk-32MiB 40 .gpu/bin/gpu-heap-lk utilisation --strategy ualloc --heap-size 32MiB --sizes 16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,65536 --json $o/util-lk-32MiB.json
run util-lk-1GiB 20 .gpu/bin/gpu-heap-lk utilisation --strategy ualloc --heap-size 1GiB --sizes 1024,2048,4096,8192,16384,32768,65536 --json $o/util-lk-1GiB.json
ch() { local s=$(date +%s); timeout 30 .gpu/bin/gpu-heap-$2 conformance --strategy ualloc --scenario churn --slots 65536 > $o/$1.txt 2>&1; echo "$1: rc $? $(( $(date +%s) - s )) s $(grep -h 'ualloc     churn' $o/$1.txt | cut -c20-)" >> $o/log.txt; }
for k in $(seq 1 3); do [ $(left) -lt 90 ] && break; ch chw-lk-$k lk; done; save
G="--strategy bump,ualloc --test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,256,1024,4096,8192 --prime --cell-secs 1"
for k in 1 2 3; do for b in m9 lk; do run g-$b-$k 25 .gpu/bin/gpu-heap-$b bench $G --json $o/g-$b-$k.json; done; done
cat $o/log.txt; for f in $o/ua-*.txt; do echo "== $(basename $f)"; grep -h "panicked\|test result\|left:\|right:" $f | cut -c1-300; done; grep -hE " (pass|FAIL) |  [a-z].*:" $o/conf-*.txt | cut -c1-120; grep -h "%" $o/util-*.txt | head -30
