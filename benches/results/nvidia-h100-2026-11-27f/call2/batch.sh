# Call 2 of the sixth session: j (index, walk from the hint cut to 32 positions) against f, ouro-c-s and bump.
gunzip -f .gpu/bin/*.gz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 570 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
md5sum .gpu/bin/gpu-heap-* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
J=.gpu/bin/gpu-heap-j; F=.gpu/bin/gpu-heap-f
G="--threads 10000,100000,1000000 --sizes 16,256,1024,4096 --prime --cell-secs 1"
run bench-j 100 $J bench --strategy bump,ouro-c-s --test alloc,accumulate $G --json $o/bench-j.json
run bench-f 100 $F bench --strategy bump,ouro-c-s --test alloc,accumulate $G --json $o/bench-f.json
cat $o/log.txt; grep -hE '^(alloc|accum)' $o/bench-*.txt | grep -v nothing | cut -c1-110
