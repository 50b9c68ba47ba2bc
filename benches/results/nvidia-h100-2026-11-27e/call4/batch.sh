# Call 4 of the fifth session: emptied queue chunks. m = main 12ef889 (ouroboros as 39ccbeb), e = branch ouro-emptied-chunks.
gunzip -f .gpu/bin/*.gz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 560 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
G="--threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
run bench-m 70 .gpu/bin/gpu-heap-m bench --strategy bump,ouro-p-va,ouro-p-vl --test alloc,accumulate $G --json $o/bench-m.json
run bench-e 70 .gpu/bin/gpu-heap-e bench --strategy bump,ouro-p-va,ouro-p-vl --test alloc,accumulate $G --json $o/bench-e.json
run conf-e-p-vl-1024 400 .gpu/bin/gpu-heap-e conformance --strategy ouro-p-vl --workgroups 1024 --json $o/conf-e-p-vl-1024.json
cat $o/log.txt; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt | cut -c1-160 | head -60
