SELECT customer_id, SUM(amount) AS total_spend FROM source('orders') WHERE EXTRACT(WEEK FROM ordered_at) = 1 GROUP BY customer_id
