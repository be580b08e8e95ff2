SELECT customer_id, total_spend, total_spend * 2 AS doubled
FROM ref('customer_metrics')
WHERE total_spend > 100
