SELECT customer_id, total_spend
FROM source('customer_metrics')
