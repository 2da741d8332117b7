#!/bin/bash
# Counts for issue 23 (entity registry + list parameter). Run from a worktree root.
echo "total source files: $(find lib adapters -name '*.ts' | wc -l)"
echo "extends 'products' conditionals: $(grep -rn "extends 'products'" lib adapters | wc -l)"
echo "products/orders list literals outside the registry: $(grep -rnE "\[\s*'products',\s*'orders'\s*\]|\[\s*'orders',\s*'products'\s*\]" lib adapters | grep -v '^lib/contract/entities.ts' | wc -l)"
echo "per-entity tables keyed {products: …, orders: …} on one line (outside entities.ts): $(grep -rnE "\{\s*products:\s*[^,}]+,\s*orders:" lib adapters | grep -v '^lib/contract/entities.ts' | wc -l)"
echo "files naming an entity literally ('products'/'orders' or products:/orders: keys), outside entities.ts: $(grep -rlE "'products'|'orders'|\bproducts\??:|\borders\??:" lib adapters | grep -v '^lib/contract/entities.ts' | wc -l)"
echo "runtime branches on an entity name (=== / !== 'products'|'orders'): $(grep -rnE "[!=]==? '(products|orders)'" lib adapters | wc -l)"
echo "per-entity fact tables: $(grep -rnE "^(export )?const (ITEM_SCHEMAS|SINGULAR|REVERSE_ITEM_SCHEMAS|CONVERTERS|WRITE_BODIES|UNIQUE_MEMBERS|KEY_OF|CHECK_HOOKS|ENTITY_TAGS|STUB_MEMBERS|STUB_EXTRA|BUILT_IN_CHECKS)\b" lib adapters | wc -l)"
