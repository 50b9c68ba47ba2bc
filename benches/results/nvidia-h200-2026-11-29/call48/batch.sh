# twenty-fourth session, call 2 (call48): M = ff8be78 (main); N2 = the chunk-based mallocs of a subgroup together (one take, then the first lane's claim of one chunk's pages in one bitmask word for all; or a chunk per piece made at once) and the page-based ones (one take, or one wait per piece for the whole piece's units, the batch it produces keeping a page for each). Grids of N2's six Ouroboros variants and M's page-based ones with bump; conformance of N2's Ouroboros at 1024 workgroups, scale at 8192, out-of-memory
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
g="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
M=.gpu/bin/gpu-heap-M; N=.gpu/bin/gpu-heap-N2
run grid-N2 100 $N bench $g --strategy bump,ouro-p-s,ouro-p-va,ouro-p-vl,ouro-c-s,ouro-c-va,ouro-c-vl --json $o/grid-N2.json
run grid-M 40 $M bench $g --strategy bump,ouro-p-s,ouro-p-va,ouro-p-vl --json $o/grid-M.json
run conf-s 60 $N conformance --strategy ouro-p-s,ouro-c-s --workgroups 1024 --json $o/conf-s.json
run conf-p 100 $N conformance --strategy ouro-p-va,ouro-p-vl --workgroups 1024 --json $o/conf-p.json
run conf-cva 110 $N conformance --strategy ouro-c-va --scenario basic,churn,exhaustion,device-bad-input,utilisation,free-all,round-trip,scale,growth --workgroups 1024 --json $o/conf-cva.json
run conf-cvl 110 $N conformance --strategy ouro-c-vl --scenario basic,churn,exhaustion,device-bad-input,utilisation,free-all,round-trip,scale,growth --workgroups 1024 --json $o/conf-cvl.json
run scale 50 $N conformance --strategy ouro-c-va,ouro-c-vl,ouro-p-vl,ouro-p-va --scenario scale --workgroups 8192 --json $o/scale.json
run oom 40 $N bench --test out-of-memory --strategy ouro-p-s,ouro-p-va,ouro-c-va --json $o/oom.json
cat $o/log.txt; grep -hE " (pass|FAIL) " $o/conf*.txt $o/scale*.txt | cut -c1-100
