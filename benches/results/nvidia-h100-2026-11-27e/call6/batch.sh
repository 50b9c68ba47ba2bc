# Call 6, on the same machine: the four scenarios of ouro-c-vl that call 5's 180 s did not reach.
gunzip -f .gpu/bin/*.gz 2>/dev/null; chmod +x .gpu/bin/*; source .gpu/env.sh >/dev/null 2>&1; o=$OUT/r; mkdir -p $o
st=$(date +%s); timeout 300 .gpu/bin/gpu-heap-e conformance --strategy ouro-c-vl --scenario growth,scale,free-all,round-trip --workgroups 1024 --json $o/conf-e-ouro-c-vl-1024-b.json > $o/conf-e-ouro-c-vl-1024-b.txt 2>&1; echo "c-vl b rc $? $(( $(date +%s)-st )) s" >> $o/log.txt
cat $o/log.txt; grep -h pass $o/conf*.txt | cut -c1-100
