SELECT customer_id,
  UPPER(SUM(amount)) AS total_spend
FROM source('orders')
GROUP BY customer_id
