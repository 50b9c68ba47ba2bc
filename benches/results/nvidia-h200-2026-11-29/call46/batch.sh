# twenty-third session, call 7 (call46): L = 890d68e (main: rw-malloc's neighbours, a strategy's state at word 1056). The alloc and accumulate grids of every strategy with bump (as call 33: --prime, --cell-secs 1, failure counters only), then conformance at 1024 workgroups of rw-bm, rw-malloc, tbuddy, ouro-p-s, ouro-c-s, and ualloc's scale, free-all and round-trip
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 330 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
date -u >> $o/log.txt
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
g="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
K=.gpu/bin/gpu-heap-L
run walks 70 $K bench $g --strategy bump,rw-bm,rw,corw,rw-malloc --json $o/walks.json
run buddy 40 $K bench $g --strategy tbuddy,ualloc --json $o/buddy.json
run ouro-p 50 $K bench $g --strategy ouro-p-s,ouro-p-va,ouro-p-vl --json $o/ouro-p.json
run ouro-c 60 $K bench $g --strategy ouro-c-s,ouro-c-va,ouro-c-vl --json $o/ouro-c.json
run conf 100 $K conformance --strategy rw-bm,rw-malloc,tbuddy,ouro-p-s,ouro-c-s --workgroups 1024 --json $o/conf.json
run conf-ualloc 45 $K conformance --strategy ualloc --scenario scale,free-all,round-trip --workgroups 1024 --json $o/conf-ualloc.json
cat $o/log.txt; grep -hE " (pass|FAIL) " $o/conf*.txt | cut -c1-100; head -12 $o/ouro-c.txt | tail -3
