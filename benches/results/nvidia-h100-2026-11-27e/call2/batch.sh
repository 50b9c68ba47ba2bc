# Call 2 of the fifth session: x (ualloc-exclusive-finds 0a1ee84, on main 39ccbeb) conformance:
# corw and rw-malloc (heap_nth_bit via sg_nth_set_bit), ualloc's first process at 1024, tbuddy at 8192.
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
X=.gpu/bin/gpu-heap-x
run conf-x-corw-1024 70 $X conformance --strategy corw --workgroups 1024 --json $o/conf-x-corw-1024.json
run conf-x-rw-malloc-1024 70 $X conformance --strategy rw-malloc --workgroups 1024 --json $o/conf-x-rw-malloc-1024.json
run conf-x-1024-a 330 $X conformance --strategy ualloc --scenario basic,exhaustion,utilisation,growth --workgroups 1024 --json $o/conf-x-1024-a.json
run conf-x-tbuddy-8192 60 $X conformance --strategy tbuddy --workgroups 8192 --json $o/conf-x-tbuddy-8192.json
cat $o/log.txt; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt | cut -c1-160 | head -60
