SELECT customer_id, amount AS total_spend
FROM source('orders')
UNION ALL
SELECT customer_id, amount AS total_spend
FROM source('orders')
