# twenty-third session, call 4 (call43): n = b3abfa6 (main: rw-malloc's neighbours), c = n + a neighbour's piece claimed without the read-only check first. rw-malloc's alloc and accumulate cells at 10k-1M, n and c alternately, twice; c's conformance at 1024 and 8192 workgroups; then the alloc and accumulate grids of every strategy with n (as call 33: --prime, --cell-secs 1, failure counters only)
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 585 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
date -u >> $o/log.txt
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
g="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
for k in 1 2; do
  for b in n c; do run rwm-$b-$k 30 .gpu/bin/gpu-heap-$b bench $g --strategy bump,rw-malloc --json $o/rwm-$b-$k.json; done
done
run conf-c-1024 40 .gpu/bin/gpu-heap-c conformance --strategy rw-malloc --workgroups 1024 --json $o/conf-c-1024.json
run conf-c-8192 40 .gpu/bin/gpu-heap-c conformance --strategy rw-malloc --scenario scale,round-trip,free-all --workgroups 8192 --json $o/conf-c-8192.json
K=.gpu/bin/gpu-heap-n
run walks 80 $K bench $g --strategy bump,rw-bm,rw,corw,rw-malloc --json $o/walks.json
run buddy 60 $K bench $g --strategy tbuddy,ualloc --json $o/buddy.json
run ouro-p 80 $K bench $g --strategy ouro-p-s,ouro-p-va,ouro-p-vl --json $o/ouro-p.json
run ouro-c 250 $K bench $g --strategy ouro-c-s,ouro-c-va,ouro-c-vl --json $o/ouro-c.json
cat $o/log.txt; grep -hE " (pass|FAIL) " $o/conf-*.txt | cut -c1-100
