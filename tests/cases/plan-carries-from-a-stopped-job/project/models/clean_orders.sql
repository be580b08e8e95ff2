SELECT customer_id, amount
FROM source('orders')
WHERE customer_id IS NOT NULL
