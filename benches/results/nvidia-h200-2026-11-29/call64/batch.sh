# twenty-seventh session, call 3 (call64): why ouro-p-s's 100k x 8 KiB malloc is slower with fresh runs (M 0.0112, G2 0.0131 in call 63). G3 = G2 with fresh runs only for classes of more than one page a chunk; M = main 1cbbf18; G2 = ced6009. Then books of ouro-p-vl (M and G2) at 100k and 1M x 16 B: queue chunks per round
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 400 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
date -u >> $o/log.txt
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
g="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1 --strategy bump,ouro-p-s"
for i in 1 2; do for b in M G2 G3; do run s-$b-$i 40 .gpu/bin/gpu-heap-$b bench $g --json $o/s-$b-$i.json; done; done
bk="--test alloc --threads 100000,1000000 --sizes 16,8192 --strategy bump,ouro-p-vl --books --cell-secs 2"
run books-M 60 .gpu/bin/gpu-heap-M bench $bk --json $o/books-M.json
run books-G2 60 .gpu/bin/gpu-heap-G2 bench $bk --json $o/books-G2.json
cat $o/log.txt
