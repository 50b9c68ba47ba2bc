# call 5 (twelfth session): j = main 9e62248: conformance of the chunk-based Ouroboros variants, whose index is a summary bitmap (sb_search changed: one repair per search)
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 330 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
cold() { # name cmd... : a fresh HOME and no driver disk cache
  local n=$1; shift; local h=$(mktemp -d)
  local s=$(date +%s%N)
  HOME=$h XDG_CACHE_HOME=$h __GL_SHADER_DISK_CACHE=0 timeout 120 "$@" > $o/$n.txt 2>&1
  echo "$n: rc $? $(( ($(date +%s%N) - s) / 1000000 )) ms" >> $o/log.txt; save; }
J=.gpu/bin/gpu-heap-j
run conf-j-c-s 90 $J conformance --strategy ouro-c-s --workgroups 1024 --json $o/conf-j-c-s.json
run conf-j-c-s-8192 60 $J conformance --strategy ouro-c-s --scenario scale --workgroups 8192 --json $o/conf-j-c-s-8192.json
run conf-j-c-va 170 $J conformance --strategy ouro-c-va --workgroups 1024 --json $o/conf-j-c-va.json
cat $o/log.txt; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt 2>/dev/null | cut -c1-110
