# eighteenth session, call 5: jf = main ce5c07f; v1 = branch regs2's first commit (the collective attempt carries across the tree buddy's malloc only what its lanes cannot compute again), v12 = v1 + ua_rounds' eight flags in one word. Registers of the three; the variant with fewer registers than jf (v12 if it has as few as v1) gets grids against jf, tests/ualloc.rs, conformance and utilisation.
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 380 - $(date +%s) + t0 )); }
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
for b in jf v1 v12; do run ks-$b 30 .gpu/bin/gpu-heap-$b kernel-stats --strategy ualloc --json $o/ks-$b.json; done
reg() { grep "bench_malloc" $o/ks-$1.txt | sed 's/.*Register Count \([0-9]*\).*/\1/'; }
J=$(reg jf); A=$(reg v1); B=$(reg v12); echo "registers jf $J v1 $A v12 $B" >> $o/log.txt
V=none; if [ -n "$B" ] && [ "$B" -lt "$J" ] && [ "$B" -le "$A" ]; then V=v12; elif [ -n "$A" ] && [ "$A" -lt "$J" ]; then V=v1; fi
echo "chosen $V" >> $o/log.txt
if [ $V != none ]; then
G="--strategy bump,ualloc --test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,1024,2048,4096,8192 --prime --cell-secs 1"
for k in 1 2; do for b in jf $V; do run g-$b-$k 25 .gpu/bin/gpu-heap-$b bench $G --json $o/g-$b-$k.json; done; done
for k in 1 2; do s=$(date +%s); timeout 40 .gpu/bin/ualloc-test-$V --nocapture --test-threads 1 > $o/ua-$V-$k.txt 2>&1; echo "ua-$V-$k: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; done; save
run conf-$V 150 .gpu/bin/gpu-heap-$V conformance --strategy ualloc --workgroups 1024 --json $o/conf-$V.json
run conf-$V-scale 70 .gpu/bin/gpu-heap-$V conformance --strategy ualloc --scenario scale --workgroups 8192 --json $o/conf-$V-scale.json
run util-$V 30 .gpu/bin/gpu-heap-$V utilisation --strategy ualloc --heap-size 32MiB --sizes 16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,65536 --json $o/util-$V.json
fi
cat $o/log.txt; grep -h "Register" $o/ks-*.txt; grep -h "test result\|panicked" $o/ua-*.txt; grep -hE " (pass|FAIL) " $o/conf-*.txt | cut -c1-100; grep -h "%" $o/util-*.txt | head -14
