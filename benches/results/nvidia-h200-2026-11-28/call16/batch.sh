# eighteenth session, call 3: jf = main ce5c07f. The conformance scenarios at 1024 workgroups that call 13 (m10) did not reach for the virtualized Ouroboros variants: ouro-p-va's last two, ouro-p-vl's last four, ouro-c-va's last five, ouro-c-vl's ten.
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 570 - $(date +%s) + t0 )); }
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
C=".gpu/bin/gpu-heap-jf conformance --workgroups 1024"
run conf-ouro-p-va 60 $C --strategy ouro-p-va --scenario free-all,round-trip --json $o/conf-ouro-p-va.json
run conf-ouro-p-vl 130 $C --strategy ouro-p-vl --scenario growth,scale,free-all,round-trip --json $o/conf-ouro-p-vl.json
run conf-ouro-c-va 150 $C --strategy ouro-c-va --scenario utilisation,growth,scale,free-all,round-trip --json $o/conf-ouro-c-va.json
run conf-ouro-c-vl 240 $C --strategy ouro-c-vl --json $o/conf-ouro-c-vl.json
cat $o/log.txt; grep -hE " (pass|FAIL) " $o/conf-*.txt | cut -c1-110
