SELECT order_id, SUM(amount) OVER (
  PARTITION BY customer_id ORDER BY placed_at RANGE BETWEEN INTERVAL '1' MONTH PRECEDING AND CURRENT ROW
) AS last_month
FROM source('orders')
