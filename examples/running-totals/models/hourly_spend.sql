-- Every order with what its customer spent in the hour up to it, and the largest of those
-- orders: an order placed exactly an hour earlier still counts.
SELECT
  order_id,
  customer_id,
  amount,
  placed_at,
  SUM(amount) OVER last_hour AS spent_last_hour,
  MAX(amount) OVER last_hour AS largest_last_hour
FROM source('order_events')
WINDOW last_hour AS (
  PARTITION BY customer_id
  ORDER BY placed_at
  RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW
)
