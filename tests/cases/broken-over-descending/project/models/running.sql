SELECT order_id, SUM(amount) OVER (PARTITION BY customer_id ORDER BY placed_at DESC) AS running_total
FROM source('orders')
