SELECT customer_id, amount AS total_spend
FROM source('orders')
UNION
SELECT customer_id, amount AS total_spend
FROM source('orders')
