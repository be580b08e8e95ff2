SELECT customer_id, amount AS total_spend
FROM source('orders')
HAVING amount > 1
