SELECT order_id FROM source('orders')
WHERE SUM(amount) OVER (PARTITION BY customer_id ORDER BY placed_at) > 100
