SELECT customer_id, total_spend
FROM ref('customer_metric')
WHERE total_spend > 100
