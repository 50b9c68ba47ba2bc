# twentieth session, call 2: where a page-based free's queue put goes: d3 (the slot written with a store, no compare-exchange; diagnostic) and d4 (no semaphore signal; diagnostic) against main; conformance of ouro-c-s and ouro-c-vl at 1024 with the review's refactor
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
A="--test alloc --threads 1000000 --prime --cell-secs 1"
for k in 1 2 3; do
  for b in main d3 d4; do run g-$b-$k 30 .gpu/bin/gpu-heap-$b bench $A --strategy bump,ouro-p-s --sizes 16,256,4096 --json $o/g-$b-$k.json; done
done
run conf-ouro-c 400 .gpu/bin/gpu-heap-main conformance --strategy ouro-c-s,ouro-c-vl --workgroups 1024 --json $o/conf-ouro-c.json
cat $o/log.txt; grep -hE " (pass|FAIL) " $o/conf-*.txt | cut -c1-100
