# twenty-fifth session, call 4 (call54): R = main (c0422d0's shaders, bench --books reading Ouroboros's books). The chunk-based cells with a slow mode at 100k x 16-64 B with full statistics and books (malloc events per round); conformance at 1024 of the scenarios main's ouro-c-va and ouro-c-vl had not run on the GPU
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 290 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
date -u >> $o/log.txt
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
g="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
K=.gpu/bin/gpu-heap-R
run books 60 $K bench --test alloc --threads 100000 --sizes 16,64 --strategy ouro-c-s,ouro-c-va,ouro-c-vl --full-statistics --books --json $o/books.json
run conf-cva 110 $K conformance --strategy ouro-c-va --scenario exhaustion,utilisation,device-bad-input,host-bad-input,growth --workgroups 1024 --json $o/conf-cva.json
run conf-cvl 120 $K conformance --strategy ouro-c-vl --scenario device-bad-input,host-bad-input,exhaustion --workgroups 1024 --json $o/conf-cvl.json
cat $o/log.txt; grep -hE " (pass|FAIL) " $o/conf*.txt | cut -c1-100
