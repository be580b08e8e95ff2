SELECT order_id,
  SUM(amount) OVER (PARTITION BY customer_id ORDER BY placed_at) AS customer_total,
  COUNT(*) OVER (ORDER BY placed_at) AS orders_so_far
FROM source('orders')
