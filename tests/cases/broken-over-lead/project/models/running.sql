SELECT order_id, LEAD(amount) OVER (PARTITION BY customer_id ORDER BY placed_at) AS next_amount
FROM source('orders')
