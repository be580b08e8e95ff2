SELECT order_id, SUM(amount) OVER (
  PARTITION BY customer_id ORDER BY placed_at ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING
) AS around
FROM source('orders')
