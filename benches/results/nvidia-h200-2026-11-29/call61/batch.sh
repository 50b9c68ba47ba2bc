# twenty-sixth session, call 7 (call61): X = main before this call (call60's F); Y = X + ouro-c-va's token-log queue chunks made by the one invocation that claims the pointer word (CT_PTR_BUSY), inserters waiting OURO_MAKE_WAIT rounds. ouro-c-va grids of X and Y alternately, twice; Y's books at 100k x 16/64 B and conformance of ouro-c-va at 1024
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 200 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
date -u >> $o/log.txt
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
g="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
for i in 1 2; do for b in X Y; do
  run grid-$b-$i 30 .gpu/bin/gpu-heap-$b bench $g --strategy bump,ouro-c-va --json $o/grid-$b-$i.json
done; done
run books-Y 25 .gpu/bin/gpu-heap-Y bench --test alloc --threads 100000 --sizes 16,64 --strategy ouro-c-va --books --json $o/books-Y.json
run conf-cva-Y 80 .gpu/bin/gpu-heap-Y conformance --strategy ouro-c-va --scenario churn,scale,free-all,round-trip,exhaustion --workgroups 1024 --json $o/conf-cva-Y.json
cat $o/log.txt; grep -hE " (pass|FAIL) " $o/conf*.txt | cut -c1-100
