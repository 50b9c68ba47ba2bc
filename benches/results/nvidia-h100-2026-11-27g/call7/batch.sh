# Call 7 of the seventh session: ualloc without the collective fresh bins (h2, the diagnostic H2 as a CLI) against l: the alloc and accumulate grids with bump, l, h2, l again; then conformance of h2 at 1024.
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
L=.gpu/bin/gpu-heap-l; H=.gpu/bin/gpu-heap-h2
G="--threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
run bench-l 120 $L bench --strategy bump,ualloc --test alloc,accumulate $G --json $o/bench-l.json
run bench-h2 120 $H bench --strategy bump,ualloc --test alloc,accumulate $G --json $o/bench-h2.json
run bench-l2 120 $L bench --strategy bump,ualloc --test alloc,accumulate $G --json $o/bench-l2.json
run conf-h2 400 $H conformance --strategy ualloc --workgroups 1024 --json $o/conf-h2.json
cat $o/log.txt; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt | cut -c1-110
