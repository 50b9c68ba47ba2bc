# twenty-fifth session, call 3 (call53): P = c0422d0 (the exact hand-over), Q = P + a grouped take's walk seeds from the semaphore's ticket instead of the class's spread counter (not kept: no difference). Chunk-based grids of P and Q alternately, twice; ouro-c-s and ouro-c-va at 100k x 16 and 64 B with full statistics (the events behind ouro-c-va's slow cells there); Q's refused hand-over test and conformance at 1024
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 520 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
date -u >> $o/log.txt
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
g="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
for i in 1 2; do for b in P Q; do
  run grid-$b-$i 45 .gpu/bin/gpu-heap-$b bench $g --strategy bump,ouro-c-s,ouro-c-va,ouro-c-vl --json $o/grid-$b-$i.json
done; done
K=.gpu/bin/gpu-heap-Q
run events 40 $K bench --test alloc --threads 100000 --sizes 16,64,256 --strategy ouro-c-s,ouro-c-va,ouro-c-vl --full-statistics --json $o/events.json
run t-refill-Q 40 .gpu/bin/t-refill-Q
run conf-cs 75 $K conformance --strategy ouro-c-s --workgroups 1024 --json $o/conf-cs.json
run conf-cva 70 $K conformance --strategy ouro-c-va --scenario churn,scale,free-all,round-trip --workgroups 1024 --json $o/conf-cva.json
run conf-cvl 200 $K conformance --strategy ouro-c-vl --scenario free-all,scale,round-trip --workgroups 1024 --json $o/conf-cvl.json
cat $o/log.txt; grep -hE " (pass|FAIL) " $o/conf*.txt | cut -c1-100; grep -h "test result" $o/t-*.txt
