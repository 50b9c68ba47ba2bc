# Call 1 of the seventh session: l (fresh queue chunks skip their zeroing; reset clears the segments of virtualized Ouroboros). Grid of bump + Ouroboros with l, p-va/p-vl with j; conformance l: ouro-p-vl and ouro-c-s ten at 1024.
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
J=.gpu/bin/gpu-heap-j; L=.gpu/bin/gpu-heap-l
G="--threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
run bench-l 200 $L bench --strategy bump,ouro-p-s,ouro-p-va,ouro-p-vl,ouro-c-s,ouro-c-va,ouro-c-vl --test alloc,accumulate $G --json $o/bench-l.json
run bench-j 90 $J bench --strategy bump,ouro-p-va,ouro-p-vl --test alloc,accumulate $G --json $o/bench-j.json
run conf-l-p-vl 200 $L conformance --strategy ouro-p-vl --workgroups 1024 --json $o/conf-l-p-vl.json
run conf-l-c-s 80 $L conformance --strategy ouro-c-s --workgroups 1024 --json $o/conf-l-c-s.json
cat $o/log.txt; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt | cut -c1-110
