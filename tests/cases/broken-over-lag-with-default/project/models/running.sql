SELECT order_id,
  LAG(amount, 1, 0) OVER (PARTITION BY customer_id ORDER BY placed_at) AS previous
FROM source('orders')
