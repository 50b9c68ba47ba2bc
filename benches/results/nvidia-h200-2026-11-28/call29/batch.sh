# twentieth session, call 3: e5 (queue descriptor of 96 words: the semaphore, the front and the back in three 128-byte lines; was one line of 12 words) against main 6597b91; the rest of ouro-c-vl's conformance at 1024; e5's conformance of ouro-p-s and ouro-p-va
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 560 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
date -u >> $o/log.txt
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
A="--test alloc --threads 10000,1000000 --prime --cell-secs 1"
for k in 1 2 3; do
  for b in main e5; do run g-$b-$k 30 .gpu/bin/gpu-heap-$b bench $A --strategy bump,ouro-p-s,ouro-p-va --sizes 16,256,4096 --json $o/g-$b-$k.json; done
done
run conf-e5 120 .gpu/bin/gpu-heap-e5 conformance --strategy ouro-p-s,ouro-p-va --workgroups 1024 --json $o/conf-e5.json
run conf-ouro-c-vl 300 .gpu/bin/gpu-heap-main conformance --strategy ouro-c-vl --scenario growth,scale,free-all,round-trip --workgroups 1024 --json $o/conf-ouro-c-vl.json
cat $o/log.txt; grep -hE " (pass|FAIL) " $o/conf-*.txt | cut -c1-100
