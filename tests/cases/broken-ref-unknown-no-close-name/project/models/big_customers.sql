SELECT customer_id, total_spend
FROM ref('warehouse_inventory')
WHERE total_spend > 100
