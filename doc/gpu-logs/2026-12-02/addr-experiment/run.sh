#!/bin/bash
# address experiment: which cuMemAddressReserve hints the driver honours
cd "$(dirname "$0")"
echo "== survey"; ./addr survey
echo "== child x2"; ./addr child | grep ALLOC; ./addr child
echo "== setarch -R child x2"; setarch -R ./addr child | grep ALLOC; setarch -R ./addr child | grep ALLOC
A=$(./addr child | awk '/ALLOC/{print $2}')
echo "== nohold $A"; ./addr nohold $A
echo "== hold $A"; ./addr hold $A
A=$(./addr child | awk '/ALLOC/{print $3}')
echo "== hold big $A"; ./addr hold $A
