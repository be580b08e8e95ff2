SELECT order_id, COUNT(DISTINCT amount) OVER (PARTITION BY customer_id ORDER BY placed_at) AS amounts
FROM source('orders')
