# call 26 (sixteenth session): lb = branch leaf-bins: bin-release + bins of one leaf where a bin of several cannot be had, makers of bins of several leaves counted from before their reservation, one confirming round before out of memory, m8 = main 3ecc191. tests/ualloc.rs x8 of lb, conformance, utilisation, churn, grids
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
for k in 1 2 3 4 5 6 7 8; do
  s=$(date +%s); timeout 60 .gpu/bin/ualloc-test-lb --nocapture --test-threads 1 > $o/ua-lb-$k.txt 2>&1; echo "ua-lb-$k: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt
done; save
run conf-lb-ualloc 170 .gpu/bin/gpu-heap-lb conformance --strategy ualloc --workgroups 1024 --json $o/conf-lb-ualloc.json
run conf-lb-scale 80 .gpu/bin/gpu-heap-lb conformance --strategy ualloc --scenario scale --workgroups 8192 --json $o/conf-lb-scale.json
run util-lb-32MiB 60 .gpu/bin/gpu-heap-lb utilisation --strategy ualloc --heap-size 32MiB --sizes 16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,65536 --json $o/util-lb-32MiB.json
run util-lb-1GiB 40 .gpu/bin/gpu-heap-lb utilisation --strategy ualloc --heap-size 1GiB --sizes 1024,2048,4096,8192,16384,32768,65536 --json $o/util-lb-1GiB.json
ch() { local s=$(date +%s); timeout 60 .gpu/bin/gpu-heap-$2 conformance --strategy ualloc --scenario churn --slots 65536 > $o/$1.txt 2>&1; echo "$1: rc $? $(( $(date +%s) - s )) s $(grep -h 'ualloc     churn' $o/$1.txt | cut -c20-)" >> $o/log.txt; }
for k in $(seq 1 5); do [ $(left) -lt 120 ] && break; ch chw-lb-$k lb; done; save
G="--strategy bump,ualloc --test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,256,1024,4096,8192 --prime --cell-secs 1"
for k in 1 2; do for b in m8 lb; do run g-$b-$k 40 .gpu/bin/gpu-heap-$b bench $G --json $o/g-$b-$k.json; done; done
cat $o/log.txt; for f in $o/ua-*.txt; do echo "== $(basename $f)"; grep -h "panicked\|test result\|of the 2 KiB\|left:\|right:" $f | cut -c1-260; done; grep -hE " (pass|FAIL) |  [a-z].*:" $o/conf-*.txt | cut -c1-120; grep -h "%" $o/util-*.txt | head -30
