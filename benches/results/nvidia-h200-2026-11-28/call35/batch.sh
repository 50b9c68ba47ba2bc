# twenty-first session, call 5 (call35): the growth test that failed with w (call32), three times each at f (main), w and w2 (w linking runs only while half the heap's chunks are free); l (the statistics block's hot counters each in a 128-byte line of its own, the strategy scalars after them) against f, with full statistics and without; w2 against f for ouro-p-vl and ouro-c-vl; ouro-c-vl conformance with w2
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 530 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
date -u >> $o/log.txt
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
for k in 1 2 3; do for b in f w w2; do run tg-$b-$k 40 .gpu/bin/t-growth-$b ouroboros_virtual_queues_keep; done; done
S="--test alloc --threads 10000,1000000 --sizes 16,4096 --prime --cell-secs 1 --strategy bump,rw-bm,ualloc,tbuddy,ouro-p-s"
for k in 1 2; do for b in f l; do run st-$b-$k 30 .gpu/bin/gpu-heap-$b bench $S --full-statistics --json $o/st-$b-$k.json; done; done
for b in f l; do run fo-$b 30 .gpu/bin/gpu-heap-$b bench $S --json $o/fo-$b.json; done
V="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,256,4096 --prime --cell-secs 1 --strategy bump,ouro-p-vl,ouro-c-vl"
for k in 1 2; do for b in f w2; do run vl-$b-$k 40 .gpu/bin/gpu-heap-$b bench $V --json $o/vl-$b-$k.json; done; done
run conf-w2 200 .gpu/bin/gpu-heap-w2 conformance --strategy ouro-c-vl --scenario basic,churn,exhaustion,device-bad-input,host-bad-input,utilisation,growth --workgroups 1024 --json $o/conf-w2.json
cat $o/log.txt; grep -h "test result" $o/tg-*.txt; grep -hE " (pass|FAIL) " $o/conf-*.txt | cut -c1-100
