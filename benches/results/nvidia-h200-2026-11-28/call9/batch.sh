# call 3 (seventeenth session): m9 = main fec6615, rg = branch regs (982c53a: a malloc's unused count lists an emptied bin, no give-back inlined in malloc), ra = regs + the look at TB_FREE before reserving (branch regsla). Registers, grids alternating, rg: tests/ualloc.rs, conformance, utilisation
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
for b in m9 rg ra; do run ks-$b 30 .gpu/bin/gpu-heap-$b kernel-stats --strategy ualloc --json $o/ks-$b.json; done
G="--strategy bump,ualloc --test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,256,1024,4096,8192 --prime --cell-secs 1"
for k in 1 2 3; do for b in m9 rg ra; do run g-$b-$k 25 .gpu/bin/gpu-heap-$b bench $G --json $o/g-$b-$k.json; done; done
for k in 1 2 3 4 5; do s=$(date +%s); timeout 40 .gpu/bin/ualloc-test-rg --nocapture --test-threads 1 > $o/ua-rg-$k.txt 2>&1; echo "ua-rg-$k: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; done; save
run conf-rg 170 .gpu/bin/gpu-heap-rg conformance --strategy ualloc --workgroups 1024 --json $o/conf-rg.json
run conf-rg-scale 80 .gpu/bin/gpu-heap-rg conformance --strategy ualloc --scenario scale --workgroups 8192 --json $o/conf-rg-scale.json
run util-rg-32MiB 40 .gpu/bin/gpu-heap-rg utilisation --strategy ualloc --heap-size 32MiB --sizes 16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,65536 --json $o/util-rg-32MiB.json
cat $o/log.txt; grep -h "Register" $o/ks-*.txt | head; grep -h "test result\|panicked" $o/ua-*.txt; grep -hE " (pass|FAIL) |  [a-z].*:" $o/conf-*.txt | cut -c1-160; grep -h "%" $o/util-*.txt | head -16
