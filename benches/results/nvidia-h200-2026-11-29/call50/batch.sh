# twenty-fourth session, call 4 (call50): N5 = the session's final chunk-based code: N3 (call 49) + lanes a subgroup's first lane did not serve regroup for up to four turns, the hand-over exact by ballots (a lane takes a page only from a serving lane it meets with its class and turn; the serving lane gives back pages not taken), chunks made at once only when the semaphore shows no units, a fresh chunk's stamp after its bitmask exchanges. The chunk-based grid with bump, conformance at 1024 workgroups of ouro-c-s (all), UAlloc's free-all and round-trip, ouro-c-va's and ouro-c-vl's remaining scenarios
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 325 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
date -u >> $o/log.txt
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
g="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
K=.gpu/bin/gpu-heap-N5
run ouro-c 45 $K bench $g --strategy bump,ouro-c-s,ouro-c-va,ouro-c-vl --json $o/ouro-c.json
run conf-cs 75 $K conformance --strategy ouro-c-s --workgroups 1024 --json $o/conf-cs.json
run conf-ualloc 40 $K conformance --strategy ualloc --scenario free-all,round-trip --workgroups 1024 --json $o/conf-ualloc.json
run conf-cva 100 $K conformance --strategy ouro-c-va --scenario churn,scale,free-all,round-trip,growth,basic --workgroups 1024 --json $o/conf-cva.json
run conf-cvl 60 $K conformance --strategy ouro-c-vl --scenario churn,device-bad-input,scale,round-trip,free-all --workgroups 1024 --json $o/conf-cvl.json
cat $o/log.txt; grep -hE " (pass|FAIL) " $o/conf*.txt | cut -c1-100
