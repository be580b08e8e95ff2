SELECT customer_id, TO_TIMESTAMP(customer_id) AS at_time
FROM source('orders')
