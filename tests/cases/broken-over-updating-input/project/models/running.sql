SELECT customer_id, SUM(total) OVER (ORDER BY placed_at) AS running_total
FROM (
  SELECT customer_id, SUM(amount) AS total, MAX(placed_at) AS placed_at
  FROM source('orders')
  GROUP BY customer_id
)
