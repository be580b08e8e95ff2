SELECT customer_id, total_spend
FROM ref('customer_metrics')
WHERE total_spend > 100
